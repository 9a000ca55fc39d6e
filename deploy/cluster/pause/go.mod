module tabletop.invalid/pause

go 1.24.0
