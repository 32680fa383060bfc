"""The desktop application: QApplication, main window, controllers, undo commands, engine workers."""

#: The application's version (shown in Help ▸ About).
__version__ = "0.1.0"
