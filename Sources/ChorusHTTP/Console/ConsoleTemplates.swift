import Mustache

/// The console's layout, its shared templates and its style sheet, compiled into the binary with each page's template
/// (`Console/Pages`): nothing to install beside it, nothing loaded from anywhere else. Every `{{value}}` is
/// HTML-escaped by Mustache; no template uses the unescaped forms.
enum ConsoleTemplates {
    /// Every template, by the name pages render and partials refer to.
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        let templates = [
            ("layout", layout), ("sign-in", signIn), ("refusal", refusal), ("overview", OverviewPage.template),
            ("log", LogPage.template), ("event", EventPage.template), ("projections", ProjectionsPage.template),
            ("reports", ReportsPage.template), ("users", UsersPage.template), ("erasures", ErasuresPage.template),
            ("deliveries", DeliveriesPage.template),
        ]
        for (name, text) in templates {
            // The templates are constants, parsed at the first page: a mistake fails every test.
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
        {{#refreshSeconds}}<meta http-equiv="refresh" content="{{.}}">{{/refreshSeconds}}
        <title>{{title}} · Chorus console</title>
        <link rel="stylesheet" href="/admin/console.css">
        <link rel="icon" href="/admin/favicon.svg" type="image/svg+xml">
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
        {{#notice}}<p class="banner" role="status">{{notice}}</p>{{/notice}}
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
        <input type="text" name="username" value="admin" autocomplete="username" hidden>
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
        <button type="submit">Sign in</button>
        </form>
        {{/content}}
        {{/layout}}
        """

    static let refusal = """
        {{<layout}}
        {{$content}}
        {{#page}}<p class="error" role="alert">{{message}}</p>{{/page}}
        {{/content}}
        {{/layout}}
        """

    /// The console's icon: a chorus of three voices.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d1d1f"/>\
        <circle cx="9" cy="18" r="4" fill="#0a66d0"/><circle cx="16" cy="13" r="4" fill="#fff"/>\
        <circle cx="23" cy="18" r="4" fill="#0a66d0"/></svg>
        """

    static let styleSheet = """
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
        header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #1d1d1f; }
        header .brand { color: #fff; font-weight: 600; }
        nav a { color: #d0d0d5; margin-right: 1rem; text-decoration: none; }
        nav a[aria-current="page"], nav a:hover, nav a:focus { color: #fff; text-decoration: underline; }
        .sign-out { margin-left: auto; }
        main { padding: 1rem 1.5rem; max-width: 80rem; }
        table { border-collapse: collapse; margin-bottom: 1.5rem; }
        th, td { text-align: left; vertical-align: top; padding: .3rem .9rem .3rem 0; border-bottom: 1px solid #ddd; }
        td.time { white-space: nowrap; }
        td.fields { font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere; }
        pre { background: #fff; border: 1px solid #ddd; padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
        dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
        dd { margin: 0; }
        .error { color: #b00020; font-weight: 600; }
        .notice { color: #555; }
        .banner { background: #fff4ce; border: 1px solid #e0c36a; padding: .5rem .8rem; }
        .sign-in { display: grid; gap: .5rem; max-width: 22rem; }
        .filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
        .filters label { display: grid; font-size: 13px; }
        .report { background: #fff; border: 1px solid #ddd; padding: .6rem 1rem; margin-bottom: 1rem; }
        .content { border-left: 3px solid #ccc; padding-left: .8rem; white-space: pre-wrap; }
        .actions { display: flex; gap: .5rem; }
        :focus-visible { outline: 2px solid #0a66d0; outline-offset: 2px; }
        """
}
