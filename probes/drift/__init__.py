"""Version drift: each framework campaign at its pinned release and at its newest release."""
