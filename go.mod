module waitroom

go 1.26.8

require (
	github.com/tidwall/btree v1.8.2
	github.com/tidwall/redcon v1.6.4
	pgregory.net/rapid v1.3.0
)

require github.com/tidwall/match v1.1.1 // indirect
