"""The durable stores of judge calls and generations (SQLite file or PostgreSQL), and reading judgments from any source."""
