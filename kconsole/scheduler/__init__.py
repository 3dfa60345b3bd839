"""scheduler layer; see ../shared/DESIGN.md."""
