"""The explorer: one query over its sources, Match, Share and Mix, with its words."""
