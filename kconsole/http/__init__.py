"""http layer; see ../shared/DESIGN.md."""
