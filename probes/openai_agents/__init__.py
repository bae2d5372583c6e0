"""OpenAI Agents SDK (openai-agents) measured with the conformance kit, in its own side environment."""
