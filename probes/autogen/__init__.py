"""AutoGen AgentChat 0.7.5: save_state / load_state around a tool effect, tamper, kills per turn."""
