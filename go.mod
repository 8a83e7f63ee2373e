module github.com/linerpc/linerpc

go 1.26

require github.com/goccy/go-json v0.12.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.14.0
	pgregory.net/rapid v1.3.0
)
