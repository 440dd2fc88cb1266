"""The teaching content as data, and its logic: words, comparison, code, examples."""
