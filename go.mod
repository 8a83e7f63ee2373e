module github.com/linerpc/linerpc

go 1.26

require github.com/goccy/go-json v0.12.0

require pgregory.net/rapid v1.3.0
