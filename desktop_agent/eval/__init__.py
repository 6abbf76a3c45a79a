"""`desktop-agent eval`: tasks as data, checkers of real end state, private desks, reports."""
