"""Version drift: every framework campaign at its pinned release, the newest patch of its pinned minor and its newest release."""
