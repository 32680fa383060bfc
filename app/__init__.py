"""The desktop application: QApplication, main window, controllers, undo commands, engine workers."""
