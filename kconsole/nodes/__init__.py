"""nodes layer; see ../shared/DESIGN.md."""
