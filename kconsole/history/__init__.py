"""History logic shared by the console's history view and ``kconsole history``: an object's story."""
