"""tui layer; see ../shared/DESIGN.md."""
