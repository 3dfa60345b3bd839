"""objects layer; see ../shared/DESIGN.md."""
