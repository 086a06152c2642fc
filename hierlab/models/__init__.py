"""Joint feature maps, inference and loss-augmented inference, one module per family."""
