"""client layer; see ../shared/DESIGN.md."""
