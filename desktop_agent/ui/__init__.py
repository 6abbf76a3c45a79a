"""Qt widgets of the desktop app: windows, dialogs, tray, and the panel shown while acting."""
