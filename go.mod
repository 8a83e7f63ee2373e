module github.com/linerpc/linerpc

go 1.26.8

require github.com/goccy/go-json v0.12.0
