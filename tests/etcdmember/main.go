// Command etcdmember is etcd itself (go.etcd.io/etcd/server/v3/etcdmain at
// the version go.mod pins, v3.7.3), built from the module so the cluster
// end-to-end test (make e2e-etcd) needs no system package: the same flags
// and behaviour as the etcd binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
