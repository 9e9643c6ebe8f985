"""The CallAssist service: FastAPI app, settings, CLI and shared resources."""
