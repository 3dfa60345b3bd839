"""api layer; see ../shared/DESIGN.md."""
