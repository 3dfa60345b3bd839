"""controllers layer; see ../shared/DESIGN.md."""
