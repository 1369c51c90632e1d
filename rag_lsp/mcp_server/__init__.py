"""The MCP server: the same workspace and features as the language server, as tools for AI assistants."""
