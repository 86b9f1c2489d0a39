module github.com/hotkv/hotkv

go 1.26

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0 // indirect
	github.com/alphadose/haxmap v1.4.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/bytedance/gopkg v0.1.1 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	github.com/cloudwego/netpoll v0.7.2 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
	github.com/puzpuzpuz/xsync/v3 v3.5.1 // indirect
	github.com/yuin/gopher-lua v1.1.2 // indirect
	golang.org/x/exp v0.0.0-20221031165847-c99f073a8326 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
