"""Generated from proto/ by scripts/gen.sh; do not edit."""
