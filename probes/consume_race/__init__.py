"""Cross-process consume-once campaign: racing resumes of one interrupt (see campaign.py)."""
