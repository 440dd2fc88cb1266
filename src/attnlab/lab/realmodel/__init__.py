"""The real-model section's display: token labels, and every sentence its views show, with claims."""
