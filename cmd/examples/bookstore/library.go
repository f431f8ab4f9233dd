package bookstore

import (
	"fmt"
	"math/rand/v2"

	bookstorev1 "github.com/localgrpc/localgrpc/gen/bookstore/v1"
)

// CharlesDickens is the author whose books the article lists.
const CharlesDickens = "Charles Dickens"

// A Record is a book as the store keeps it. The servers build a
// bookstorev1.Book for each book they send, as the article's do from
// their records: the cost of a real store's rows is in every measurement.
type Record struct {
	Title           string
	Author          string
	PublicationYear int
	Genre           string
}

// Proto is the book as a message.
func (r *Record) Proto() *bookstorev1.Book {
	return &bookstorev1.Book{
		Title:           r.Title,
		Author:          r.Author,
		PublicationYear: int32(r.PublicationYear),
		Genre:           r.Genre,
	}
}

// A Library is the books of a store, in the order they are listed.
type Library []Record

// ByAuthor is the books of author, in the library's order: what
// ListBooks returns.
func (l Library) ByAuthor(author string) []*bookstorev1.Book {
	var books []*bookstorev1.Book
	for i := range l {
		if l[i].Author == author {
			books = append(books, l[i].Proto())
		}
	}
	return books
}

// The authors, titles and genres of the article's data set.
var (
	otherAuthors = []string{
		"George Orwell", "Mark Twain", "Gabriel Garcia Marquez", "Leo Tolstoy",
		"Jane Austen", "Toni Morrison", "Harper Lee", "Ernest Hemingway",
		"J.D. Salinger", "Virginia Woolf", "F. Scott Fitzgerald",
	}
	titles = []string{
		"Golden Horizons", "Shadows of the Past", "The Great Adventure",
		"Whispering Memories", "Dreams of Tomorrow", "Winds of Change",
		"Broken Promises", "Silent Screams", "Beneath the Stars",
		"Tales Untold", "Echoes of Silence", "Forgotten Paths",
	}
	genres = []string{
		"Fiction", "Historical", "Satire", "Romance", "Mystery", "Dystopian",
		"Drama", "Science Fiction", "Fantasy",
	}
)

// NewLibrary generates a library of total books, dickens of them by
// Charles Dickens, spread evenly among the others'. The same arguments
// give the same library, so that runs compare; every title is distinct,
// so that a title finds one book.
func NewLibrary(total, dickens int) Library {
	if dickens < 0 || dickens > total {
		panic(fmt.Sprintf("bookstore: %d books by Charles Dickens among %d", dickens, total))
	}
	rng := rand.New(rand.NewPCG(uint64(total), uint64(dickens)))
	l := make(Library, total)
	for i := range l {
		author := otherAuthors[rng.IntN(len(otherAuthors))]
		// Book i is Dickens's when it takes the count of his books so
		// far, i*dickens/total rounded down, up by one: exactly dickens
		// of them, evenly apart.
		if (i+1)*dickens/total != i*dickens/total {
			author = CharlesDickens
		}
		l[i] = Record{
			Title:           fmt.Sprintf("%s, book %d", titles[rng.IntN(len(titles))], i+1),
			Author:          author,
			PublicationYear: 1800 + rng.IntN(225),
			Genre:           genres[rng.IntN(len(genres))],
		}
	}
	return l
}

// Article is a library in the shape of the article's data: 1,000 books by
// twelve authors, 89 of them Charles Dickens's.
func Article() Library { return NewLibrary(1000, 89) }

// Large is a library where Charles Dickens has 10,000 books, among 20,000:
// a listing long enough that its cost is the messages'.
func Large() Library { return NewLibrary(20_000, 10_000) }
