@_spi(CommandLine) import Attribution

/// What `--help` and `--version` print.
enum HelpText {
    static let version = ReleaseVersion.line

    static let usage = """
        OVERVIEW: Verify AdAttributionKit postbacks and impressions (ES256 compact JWS) and SKAdNetwork postbacks
                  (1.0 to 4.0) strictly, one record per item.

        USAGE: postback-verify [OPTIONS] [PATH ...]
               postback-verify export --state PATH|URL [--after CURSOR]   (see postback-verify export --help)
               postback-verify outbox --state PATH|URL [--dead]           (see postback-verify outbox --help)

        ARGUMENTS:
          PATH                    A file or directory; none, or -, reads standard input.
                                  *.json files hold one item; other files one item per line; directories are
                                  searched for *.json, *.jsonl, *.jws and *.txt in byte order of path.
                                  Blank lines and lines starting with # are skipped. On standard input a
                                  document printed over several lines (a lone { ... }) is one item.
                                  Compressed or binary data, JSON Lines in a *.json file, or a printed
                                  document in another file is one invalid item that says what to do.

        OPTIONS:
          --format text|jsonl     Output form (default: text). jsonl writes one JSON record per line.
          --key KID=PATH          Trust the PEM (or DER) P-256 public key at PATH for kid KID. Repeatable.
                                  Use it for your own impression-signing key and for new Apple kids.
          --allow-development     Also trust Apple's development kids (results say environment development).
                                  Any device in developer mode can mint such postbacks: never in production.
          --strict                Warnings become rejections (code rule-warning).
          --no-dedupe             Do not mark repeated postbacks as duplicates.
          --state PATH|URL        Remember valid postbacks across runs: in the SQLite file at PATH (created when
                                  missing), or in a PostgreSQL database given as a postgresql:// URL or a libpq
                                  string ('host=db dbname=postbacks'; password from PGPASSWORD or ~/.pgpass). A
                                  postback already there is a duplicate of that first record. Runs at once, on one
                                  machine or many, may share it. See docs/state.md.
          --retention DAYS        With --state: forget postbacks first seen more than DAYS days ago (default 10).
          --expect valid|invalid  Exit 0 only if every item had this verdict (for CI over fixtures).
          -j, --jobs N            Signature worker threads (default: all cores). With cores to spare, the reader
                                  thread parses (and, for the usual postback, also applies the rules and writes
                                  the record) and the writer thread finishes the other items.
          --max-impression-age D  Warn (I3) on impressions older than D: a whole number with a unit, d (days),
                                  h (hours), m (minutes) or s (seconds), e.g. 30d or 12h; a bare number is
                                  seconds. Default: no limit.
          --explain               Also show the exact string each SKAdNetwork signature was checked over:
                                  jsonl adds "signed-string" (U+2063 separators written \\u2063); text appends
                                  signed="..." with each U+2063 shown as | (text only; a | in a value looks alike).
          --skadnetwork-key-p256 PATH
                                  Verify SKAdNetwork 2.1 and later with the PEM (or DER) P-256 public key at PATH
                                  instead of Apple's. Only for testing your own signing: results say environment
                                  custom, and genuine postbacks no longer verify.
          --skadnetwork-key-p192 PATH
                                  The same for SKAdNetwork 1.0 and 2.0, with a P-192 key.
          --no-fast-path          Verify every item through the general path. By default, with jsonl output, a
                                  valid postback body of the usual shape is checked and written without a JSON
                                  tree; the records are the same byte for byte.
          --color auto|always|never
                                  Colour in text output (default: auto: only on a terminal, and not when NO_COLOR
                                  is set to a non-empty value or TERM is dumb). Also spelt --colour.
          --schema FILE           Decode conversion values with the schema in FILE (docs/schema.md): valid
                                  postbacks' jsonl records gain "decoded" (events, revenue range, campaign,
                                  window, estimated install times). A malformed schema stops the run (status 2).
          --report FILE           At the end, write the run report (verdicts, reasons, warnings, key environments,
                                  tiers, values, campaigns) to FILE: an HTML page if FILE ends in .html (any
                                  case), else JSON.
          --label NAME            The name standard input goes by in the report and, with --state, in what later
                                  runs' duplicates say (default: stdin and the run's start).
          -q, --quiet             No summary on standard error.
          -h, --help              Show this help.
          -V, --version           Show the version.

        EXIT STATUS:
          0  every item valid (or, with --expect, every item had the expected verdict); without --expect, also
             when no items were read
          1  at least one item was not, or --expect was given and no items were read
          2  usage error, unreadable path, unusable key file or state file (named on standard error)
          3  the signature arithmetic disagreed with libcrypto on at least one item (reported invalid); a bug
             to report (checked at the end of a run, before 0, 1 and 2)
          130, 143, 129  interrupted by SIGINT, SIGTERM or SIGHUP: every record written is whole (and, with
                         --state, confirmed), the summary says so
          141  (as a shell reports it) the output was closed, e.g. by | head: the run ends quietly, as SIGPIPE
               would, once the records the reader took are confirmed (--state)

        EXAMPLES:
          postback-verify postbacks.jsonl
          postback-verify --format jsonl --key my.adnetwork=keys/impressions.pem impressions.txt
          cat bodies.jsonl | postback-verify --format jsonl --quiet > records.jsonl

        The full contract (inputs, records, codes, statuses) is docs/cli.md; the rules are docs/spec.md.
        """

    static let exportUsage = """
        OVERVIEW: Print the postbacks a receiver (postback-receiver) stored, as JSON Lines in cursor order, from
                  after CURSOR to the last one that can be read now. Keep the last line's cursor and give it
                  back as --after: every stored postback is printed once. With --to DIR, write them into gzip
                  files in DIR instead, each named in DIR/manifest.jsonl once whole; the next export into DIR
                  resumes after the manifest's last cursor.

        USAGE: postback-verify export --state PATH|URL [--archive PATH] [--after CURSOR] [--since TIME]
                                      [--until TIME] [--report FILE [--schema FILE]]
               postback-verify export --state PATH|URL [--archive PATH] --to DIR [--follow] [--roll-bytes SIZE]
                                      [--roll-seconds N] [--poll-seconds N] [--after CURSOR]

        OPTIONS:
          --state PATH|URL        The receiver's state: a SQLite file, whose received postbacks are in the
                                  archive beside it (STATE-received.sqlite, the receiver's default), or a
                                  PostgreSQL database (postgresql://... or host=... dbname=...), which holds
                                  every receiver's. Only read, never written.
          --archive PATH          With a SQLite state: the archive file, when the receiver was given --archive.
          --after CURSOR          Print only what comes after CURSOR (a line's "cursor": 812 for SQLite,
                                  5071.812 for PostgreSQL). Default: from the first.
          --since TIME            Only rows received at or after TIME: a UTC date (2026-11-26, its midnight)
                                  or an RFC 3339 time (2026-11-26T12:00:00Z).
          --until TIME            Only rows received before TIME.
          --report FILE           Write the run report of the rows printed (JSON, or HTML when FILE ends in
                                  .html), counted from their stored records, and the summary on stderr.
          --schema FILE           With --report: decode valid postbacks as of their arrival (docs/schema.md).
          --to DIR                Write gzip JSON Lines files into DIR (created when missing) and a line per
                                  finished file into DIR/manifest.jsonl (name, rows, bytes, SHA-256, first
                                  and last cursor); resume after the manifest's last cursor. One export at a
                                  time per DIR. Not with --since, --until or --report.
          --follow                With --to: keep exporting as rows arrive, until SIGINT or SIGTERM, which
                                  finish the file in progress (exit status 0).
          --roll-bytes SIZE       With --to: finish a file once it holds SIZE compressed bytes (64K to 3G;
                                  K, M, G are KiB, MiB, GiB). Default: 128M.
          --roll-seconds N        With --to: finish a file N seconds after it was started (1 to 86400),
                                  whichever comes first. Default: 900 (15 minutes).
          --poll-seconds N        With --follow: read the archive again after N seconds when nothing new came
                                  (0.01 to 3600). Default: 5.
          -h, --help              Show this help.

        OUTPUT: one line per stored postback: {"cursor","received" (RFC 3339, UTC),"request","route","verdict",
          "code","key","kept","body" (base64 of the bytes received, or of the differences kept),"position"
          (the cursor as an integer that sorts as cursors do),"record" (the record as stored)}. Characters a
          terminal must not get raw are written as \\u escapes. With --to, the same lines, in the files.

        EXIT STATUS:
          0  printed (or, with --to, wrote into finished files) everything there was, possibly nothing; with
             --follow, stopped by SIGINT or SIGTERM
          2  usage error, or the state or archive cannot be read or is not one, or DIR cannot be written or
             another export is writing it (named on standard error)

        EXAMPLES:
          postback-verify export --state "$STATE" --after "$(cat cursor)" > batch.jsonl
          postback-verify export --state "$STATE" --to /var/lib/postbacks/export --follow
        See docs/state.md, "Reading the received postbacks".
        """
}
