package fulltext

import (
	"context"
	"fmt"

	index "github.com/blevesearch/bleve_index_api"
)

// UserIDs returns the ids of every document of user, in no particular order. The owner uses it to reconcile one
// user's documents with its records (after a forget it missed) without rebuilding the whole index.
func (ix *Index) UserIDs(user string) ([]string, error) {
	if user == "" {
		return nil, fmt.Errorf("%w: empty user id", ErrInvalid)
	}
	return ix.ids(func(r index.IndexReader) (next func() (index.IndexInternalID, error), close func() error, err error) {
		tfr, err := r.TermFieldReader(context.Background(), []byte(user), fieldUserID, false, false, false)
		if err != nil {
			return nil, nil, err
		}
		return func() (index.IndexInternalID, error) {
			d, err := tfr.Next(nil)
			if d == nil || err != nil {
				return nil, err
			}
			return d.ID, nil
		}, tfr.Close, nil
	})
}

// IDs returns the ids of every document, in no particular order: after a full re-feed the owner deletes those
// its records no longer hold.
func (ix *Index) IDs() ([]string, error) {
	return ix.ids(func(r index.IndexReader) (func() (index.IndexInternalID, error), func() error, error) {
		all, err := r.DocIDReaderAll()
		if err != nil {
			return nil, nil, err
		}
		return all.Next, all.Close, nil
	})
}

// ids collects the external ids of the internal ids that open's iterator yields on one reader.
func (ix *Index) ids(open func(index.IndexReader) (func() (index.IndexInternalID, error), func() error, error)) ([]string, error) {
	adv, err := ix.b.Advanced()
	if err != nil {
		return nil, wrap("ids", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, wrap("ids", err)
	}
	defer r.Close()
	next, closeIt, err := open(r)
	if err != nil {
		return nil, wrap("ids", err)
	}
	defer closeIt()
	var ids []string
	for {
		d, err := next()
		if err != nil {
			return nil, wrap("ids", err)
		}
		if d == nil {
			return ids, nil
		}
		id, err := r.ExternalID(d)
		if err != nil {
			return nil, wrap("ids", err)
		}
		ids = append(ids, id)
	}
}
