"""The file-to-result helpers behind each CLI command and the text the commands print."""
