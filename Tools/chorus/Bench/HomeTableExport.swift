import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

/// A demo data directory's Following feeds as the tables a team would keep in PostgreSQL instead — the design
/// Mastodon's and Twitter's home timelines use: `users`, `posts` with their counters, `likes`, and `home`, every
/// user's feed materialised as (user, position, post), written as CSV files for `COPY`. The feeds are Chorus's own,
/// read from its read models, so both answer the same page.
struct HomeTableExport {
    /// The demo users `user0@…` to `user<N-1>@…`, by index: the ones the benchmark reads as.
    var demoUsers: [UserID] = []
    var homeRows = 0
    var postRows = 0

    static let schema = """
        CREATE TABLE users (id text PRIMARY KEY, name text NOT NULL, major text NOT NULL, profile_image text);
        CREATE TABLE posts (
            id text PRIMARY KEY, author_id text NOT NULL REFERENCES users, caption text NOT NULL, text text NOT NULL,
            image text, created_at timestamptz NOT NULL, likes bigint NOT NULL, comments bigint NOT NULL,
            reposts bigint NOT NULL);
        CREATE TABLE likes (user_id text NOT NULL, post_id text NOT NULL, PRIMARY KEY (user_id, post_id));
        CREATE TABLE home (user_id text NOT NULL, position bigint NOT NULL, post_id text NOT NULL,
            PRIMARY KEY (user_id, position));
        CREATE TABLE bench_users (n int PRIMARY KEY, id text NOT NULL);
        """

    /// The Following-feed page: 20 posts with their author, counters and the viewer's like, newest first, for the
    /// viewer numbered `:n` among the benchmark's users.
    static let feedQuery = """
        SELECT p.id, p.caption, p.text, p.image, p.created_at, p.likes, p.comments, p.reposts,
            u.id, u.name, u.major, u.profile_image, l.post_id IS NOT NULL AS has_liked
        FROM home h
        JOIN posts p ON p.id = h.post_id
        JOIN users u ON u.id = p.author_id
        LEFT JOIN likes l ON l.user_id = h.user_id AND l.post_id = h.post_id
        WHERE h.user_id = (SELECT id FROM bench_users WHERE n = :n)
        ORDER BY h.position DESC
        LIMIT 20;
        """

    /// Writes `users.csv`, `posts.csv`, `likes.csv`, `home.csv` and `bench_users.csv` into `directory`, from the log
    /// and read models of `data` (which no server may have open); `benchUsers` demo users are the benchmark's.
    static func write(from data: DataDirectory, benchUsers: Int, into directory: String) throws -> HomeTableExport {
        let log = try data.openLog(readOnly: true)
        defer { log.close() }
        let keys = try data.openKeys()
        defer { keys.close() }
        var export = HomeTableExport()

        let (users, byEmail, likes) = try whoIsWho(in: log, keys: keys)
        export.demoUsers = try (0..<benchUsers).map { index in
            guard let user = byEmail["user\(index)@demo.chorus"] else {
                throw BenchmarkError("the demo log has no user\(index)@demo.chorus")
            }
            return user
        }

        let engine = try ProjectionEngine(log: log, keys: keys, directory: data.projections, durable: false)
        defer { engine.close() }
        var userRows = CSVFile()
        var postRows = CSVFile()
        var homeRows = CSVFile()
        _ = try engine.snapshot { view in
            // Every post once, from the Home feed.
            var cursor: PageCursor?
            repeat {
                let page = try view.homeFeed(viewer: nil, page: PageRequest(limit: 100, cursor: cursor))
                for post in page.items {
                    postRows.row([
                        post.id.rawValue, post.author.id.rawValue, post.caption, post.text,
                        post.media.first?.id.rawValue,
                        post.createdAt.rfc3339, "\(post.likes)", "\(post.comments)", "\(post.reposts)",
                    ])
                }
                cursor = page.nextCursor
            } while cursor != nil
            for user in users {
                let summary = try view.profile(user, viewer: nil)?.summary
                userRows.row([
                    user.rawValue, summary?.name ?? "", summary?.major ?? "", summary?.profileImage?.rawValue,
                ])
            }
            // Each user's Following feed, newest first: positions count down from its length.
            for user in users {
                var ids: [PostID] = []
                var cursor: PageCursor?
                repeat {
                    let page = try view.followingFeed(of: user, page: PageRequest(limit: 100, cursor: cursor))
                    ids += page.items.map(\.id)
                    cursor = page.nextCursor
                } while cursor != nil
                for (index, id) in ids.enumerated() {
                    homeRows.row([user.rawValue, "\(ids.count - index)", id.rawValue])
                }
            }
            return 0
        }
        var likeRows = CSVFile()
        for like in likes { likeRows.row(like) }
        var benchRows = CSVFile()
        for (index, user) in export.demoUsers.enumerated() { benchRows.row(["\(index + 1)", user.rawValue]) }
        for (name, file) in [
            ("users", userRows), ("posts", postRows), ("likes", likeRows), ("home", homeRows),
            ("bench_users", benchRows),
        ] {
            try Data(file.bytes).write(to: URL(fileURLWithPath: directory + "/\(name).csv"))
        }
        export.homeRows = homeRows.rows
        export.postRows = postRows.rows
        return export
    }

    /// Who is who, and who likes what, from the log.
    private static func whoIsWho(in log: some EventLog, keys: any PersonalDataKeys) throws -> (
        users: [UserID], byEmail: [String: UserID], likes: Set<[String]>
    ) {
        var users: [UserID] = []
        var byEmail: [String: UserID] = [:]
        var likes: Set<[String]> = []
        try log.scan { record in
            switch try DomainEvent(decoding: record, keys: keys) {
            case .userRegistered(let event):
                users.append(event.user)
                byEmail[event.email] = event.user
            case .liked(let event): likes.insert([event.user.rawValue, event.post.rawValue])
            case .unliked(let event): likes.remove([event.user.rawValue, event.post.rawValue])
            default: break
            }
        }
        return (users, byEmail, likes)
    }
}

/// Rows of CSV as PostgreSQL's `COPY … (FORMAT csv)` reads them: every value quoted, nil as nothing (NULL).
struct CSVFile {
    private(set) var bytes: [UInt8] = []
    private(set) var rows = 0

    mutating func row(_ values: [String?]) {
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else { continue }
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "\n"))
        rows += 1
    }
}
