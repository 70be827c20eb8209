module github.com/finegrain/finegrain

go 1.23

require (
	github.com/google/btree v1.1.3
	github.com/leanovate/gopter v0.2.11
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
