"""Tasks and the engines that host them."""
