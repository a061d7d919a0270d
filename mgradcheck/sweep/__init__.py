"""``mgradcheck sweep``: gradcheck over a catalogue of MLX operations, each case in a child."""
