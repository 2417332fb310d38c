import Mustache

/// The console's templates and style sheet, compiled into the binary: nothing to install beside it, nothing loaded
/// from anywhere else. Every `{{value}}` is HTML-escaped by Mustache; no template uses the unescaped forms.
enum ConsoleTemplates {
    /// Every template, by the name pages render and partials refer to.
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in [("layout", layout), ("sign-in", signIn), ("overview", overview)] {
            // The templates are constants of this file, parsed at the first page: a mistake fails every test.
            try! library.register(text, named: name)
        }
        return library
    }()

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        {{$head}}{{/head}}
        <title>{{title}} · Chorus console</title>
        <link rel="stylesheet" href="/admin/console.css">
        </head>
        <body>
        <header>
        <span class="brand">Chorus console</span>
        {{#navigation}}
        <nav aria-label="Console pages">
        {{#links}}<a href="{{path}}"{{#current}} aria-current="page"{{/current}}>{{name}}</a>{{/links}}
        </nav>
        <form method="post" action="/admin/sign-out" class="sign-out">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Sign out</button>
        </form>
        {{/navigation}}
        </header>
        <main>
        <h1>{{title}}</h1>
        {{$content}}{{/content}}
        </main>
        </body>
        </html>
        """

    static let signIn = """
        {{<layout}}
        {{$content}}
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/admin/sign-in" class="sign-in">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
        <button type="submit">Sign in</button>
        </form>
        {{/content}}
        {{/layout}}
        """

    static let overview = """
        {{<layout}}
        {{$head}}<meta http-equiv="refresh" content="{{refreshSeconds}}">{{/head}}
        {{$content}}
        <p class="position">At log position {{position}}, refreshed every {{refreshSeconds}} s.</p>
        <section aria-labelledby="log">
        <h2 id="log">Log</h2>
        <dl>
        <dt>Head</dt><dd>{{head}}</dd>
        </dl>
        </section>
        <section aria-labelledby="read-models">
        <h2 id="read-models">Read models</h2>
        <table>
        <thead><tr><th scope="col">Name</th><th scope="col">Position</th><th scope="col">Lag</th>\
        <th scope="col">State</th><th scope="col">Events/s</th></tr></thead>
        <tbody>
        {{#projections}}<tr><td>{{name}}</td><td>{{position}}</td><td>{{lag}}</td><td>{{state}}</td>\
        <td>{{eventsPerSecond}}</td></tr>{{/projections}}
        </tbody>
        </table>
        </section>
        <section aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <table>
        <thead><tr><th scope="col">Outbox</th><th scope="col">Sending</th><th scope="col">Delivered</th>\
        <th scope="col">Pending</th><th scope="col">Failing</th><th scope="col">Last error</th></tr></thead>
        <tbody>
        {{#deliveries}}<tr><td>{{name}}</td><td>{{sending}}</td><td>{{delivered}}</td><td>{{pending}}</td>\
        <td>{{failing}}</td><td>{{lastError}}</td></tr>{{/deliveries}}
        {{^deliveries}}<tr><td colspan="6">Neither webhooks nor push are configured.</td></tr>{{/deliveries}}
        </tbody>
        </table>
        </section>
        {{/content}}
        {{/layout}}
        """

    static let styleSheet = """
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
        header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #1d1d1f; }
        header .brand { color: #fff; font-weight: 600; }
        nav a { color: #d0d0d5; margin-right: 1rem; text-decoration: none; }
        nav a[aria-current="page"], nav a:hover, nav a:focus { color: #fff; text-decoration: underline; }
        .sign-out { margin-left: auto; }
        main { padding: 1rem 1.5rem; max-width: 72rem; }
        table { border-collapse: collapse; margin-bottom: 1.5rem; }
        th, td { text-align: left; padding: .3rem .9rem .3rem 0; border-bottom: 1px solid #ddd; }
        dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
        dd { margin: 0; }
        .error { color: #b00020; font-weight: 600; }
        .sign-in { display: grid; gap: .5rem; max-width: 22rem; }
        :focus-visible { outline: 2px solid #0a66d0; outline-offset: 2px; }
        """
}
