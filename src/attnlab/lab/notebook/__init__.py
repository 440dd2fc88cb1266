"""The notebook around the explorer: the held sequence, stepper, playback, practice, export."""
