"""Developer tools of the checkout (not part of the installed app): run from the repository root."""
