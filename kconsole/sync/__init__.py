"""sync layer; see ../shared/DESIGN.md."""
