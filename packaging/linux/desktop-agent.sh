#!/bin/sh
# /usr/bin/desktop-agent: the app without arguments, a sub-command with them.
exec /opt/desktop-agent/desktop-agent "$@"
