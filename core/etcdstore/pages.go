package etcdstore

import (
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// cursorPage is how many keys one read of a pagedCursor fetches.
const cursorPage = 64

// pagedCursor is a cursor over a top-level bucket in a read-only
// transaction that reads the bucket a page at a time at the snapshot
// (values included) from where it is placed, instead of the whole bucket:
// a bucket's keys and its nested buckets' markers are two ranges
// (<bucket>\x00…, <bucket>\x01…), each read as a stream of pages and merged
// by name. First and Seek read the first page of both in one round trip;
// Next reads the next page of a stream when its page runs out. Last and
// Prev, which listings do not use, fall back to the whole-bucket cursor.
// (A read-only transaction has no writes of its own to merge.)
type pagedCursor struct {
	b       *bucket
	streams [2]pageStream // keys, nested bucket markers
	full    *cursor       // after Last or Prev
}

// pageStream is one range of the bucket read a page at a time.
type pageStream struct {
	end  string
	page []*mvccpb.KeyValue
	i    int
	more bool // keys past the page remain
}

func (s *pageStream) head() *mvccpb.KeyValue {
	if s.i < len(s.page) {
		return s.page[s.i]
	}
	return nil
}

// place reads the first page of both ranges from name on.
func (c *pagedCursor) place(name string) ([]byte, []byte) {
	c.full = nil
	t := c.b.t
	ops := make([]clientv3.Op, 2)
	for i, sep := range []string{sepKey, sepBucket} {
		start, end := c.b.path+sep+name, clientv3.GetPrefixRangeEnd(c.b.path+sep)
		c.streams[i] = pageStream{end: end}
		ops[i] = clientv3.OpGet(start, t.readOpts(clientv3.WithRange(end), clientv3.WithLimit(cursorPage))...)
	}
	resp := t.readTxn(ops)
	for i := range c.streams {
		r := resp.Responses[i].GetResponseRange()
		c.streams[i].page, c.streams[i].more = r.Kvs, r.More
	}
	return c.at()
}

// refill reads the stream's next page when its page is used up.
func (c *pagedCursor) refill(s *pageStream) {
	if s.head() != nil || !s.more || len(s.page) == 0 {
		return
	}
	from := string(s.page[len(s.page)-1].Key) + "\x00"
	resp, _ := c.b.t.get(from, clientv3.WithRange(s.end), clientv3.WithLimit(cursorPage))
	s.page, s.i, s.more = resp.Kvs, 0, resp.More
}

// current is the stream whose head comes first by name (nil: both done).
func (c *pagedCursor) current() (int, *mvccpb.KeyValue) {
	for i := range c.streams {
		c.refill(&c.streams[i])
	}
	k, m := c.streams[0].head(), c.streams[1].head()
	switch {
	case k == nil && m == nil:
		return -1, nil
	case m == nil:
		return 0, k
	case k == nil:
		return 1, m
	}
	n := len(c.b.path) + 1
	if string(m.Key[n:]) < string(k.Key[n:]) {
		return 1, m
	}
	return 0, k
}

func (c *pagedCursor) at() ([]byte, []byte) {
	i, kv := c.current()
	if kv == nil {
		return nil, nil
	}
	name := kv.Key[len(c.b.path)+1:]
	if i == 1 {
		return name, nil // a nested bucket
	}
	v := kv.Value
	if v == nil {
		v = []byte{}
	}
	return name, v
}

func (c *pagedCursor) First() ([]byte, []byte) {
	return c.place("")
}

// Seek moves to the first key >= seek.
func (c *pagedCursor) Seek(seek []byte) ([]byte, []byte) {
	return c.place(string(seek))
}

func (c *pagedCursor) Next() ([]byte, []byte) {
	if c.full != nil {
		return c.full.Next()
	}
	if i, kv := c.current(); kv != nil {
		c.streams[i].i++
	}
	return c.at()
}

func (c *pagedCursor) Last() ([]byte, []byte) {
	c.full = &cursor{b: c.b, i: -1}
	return c.full.Last()
}

func (c *pagedCursor) Prev() ([]byte, []byte) {
	if c.full == nil {
		k, _ := c.at()
		c.full = &cursor{b: c.b, i: -1}
		if k == nil {
			return c.full.Last()
		}
		c.full.Seek(k)
	}
	return c.full.Prev()
}
