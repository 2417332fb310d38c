import ArgumentParser
import ChorusDelivery
import Foundation

/// Push's variables: APNs when `CHORUS_APNS_KEY_FILE` is set, FCM when `CHORUS_FCM_SERVICE_ACCOUNT_FILE` is; each
/// refused, naming the variable, when a part it needs is missing or wrong.
extension ServeCommand {
    static func push(_ environment: [String: String], readFile: (String) throws -> [UInt8]) throws
        -> PushConfiguration?
    {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        func file(_ name: String, _ path: String) throws -> [UInt8] {
            do { return try readFile(path) } catch {
                throw ValidationError("\(name): cannot read \(path): \(error.localizedDescription)")
            }
        }
        func url(_ name: String) throws -> String? {
            guard let text = value(name) else { return nil }
            guard let url = URL(string: text), url.scheme?.lowercased() == "https", url.host != nil, url.query == nil
            else { throw ValidationError("\(name) must be an https URL, not \(text)") }
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        var configuration = PushConfiguration()
        if let keyFile = value("CHORUS_APNS_KEY_FILE") {
            let missing = ["CHORUS_APNS_KEY_ID", "CHORUS_APNS_TEAM_ID", "CHORUS_APNS_TOPIC"].filter { value($0) == nil }
            guard missing.isEmpty else {
                throw ValidationError("CHORUS_APNS_KEY_FILE needs \(missing.joined(separator: ", ")) too")
            }
            let pem = String(decoding: try file("CHORUS_APNS_KEY_FILE", keyFile), as: UTF8.self)
            guard APNsConfiguration.isSigningKey(pem) else {
                throw ValidationError(
                    "CHORUS_APNS_KEY_FILE: \(keyFile) is not an APNs signing key (the .p8 file, a P-256 key in PEM)")
            }
            var apns = APNsConfiguration(
                key: pem, keyID: value("CHORUS_APNS_KEY_ID")!, teamID: value("CHORUS_APNS_TEAM_ID")!,
                topic: value("CHORUS_APNS_TOPIC")!)
            if let url = try url("CHORUS_APNS_URL") { apns.productionURL = url }
            if let url = try url("CHORUS_APNS_SANDBOX_URL") { apns.sandboxURL = url }
            configuration.apns = apns
        }
        if let accountFile = value("CHORUS_FCM_SERVICE_ACCOUNT_FILE") {
            let account: FCMServiceAccount
            do {
                account = try FCMServiceAccount(json: try file("CHORUS_FCM_SERVICE_ACCOUNT_FILE", accountFile))
            } catch let error as FCMError {
                throw ValidationError("CHORUS_FCM_SERVICE_ACCOUNT_FILE: \(accountFile): \(error.description)")
            }
            var fcm = FCMConfiguration(account: account)
            if let url = try url("CHORUS_FCM_URL") { fcm.url = url }
            configuration.fcm = fcm
        }
        guard configuration.apns != nil || configuration.fcm != nil else {
            for name in [
                "CHORUS_APNS_URL", "CHORUS_APNS_SANDBOX_URL", "CHORUS_FCM_URL", "CHORUS_PUSH_CA_FILE",
                "CHORUS_PUSH_RETRY_DELAY_MS", "CHORUS_PUSH_MAX_RETRY_DELAY_MS", "CHORUS_PUSH_TIMEOUT_MS",
            ]
            where value(name) != nil {
                throw ValidationError(
                    "\(name) is set, but neither CHORUS_APNS_KEY_FILE nor CHORUS_FCM_SERVICE_ACCOUNT_FILE is")
            }
            return nil
        }
        func milliseconds(_ name: String) throws -> Duration? {
            guard let text = value(name) else { return nil }
            guard let milliseconds = Int64(text), milliseconds > 0 else {
                throw ValidationError("\(name) must be a positive number of milliseconds, not \(text)")
            }
            return .milliseconds(milliseconds)
        }
        if let delay = try milliseconds("CHORUS_PUSH_RETRY_DELAY_MS") { configuration.retryDelay = delay }
        if let delay = try milliseconds("CHORUS_PUSH_MAX_RETRY_DELAY_MS") { configuration.maximumRetryDelay = delay }
        if let timeout = try milliseconds("CHORUS_PUSH_TIMEOUT_MS") {
            configuration.apns?.timeout = timeout
            configuration.fcm?.timeout = timeout
        }
        if let caFile = value("CHORUS_PUSH_CA_FILE") {
            _ = try file("CHORUS_PUSH_CA_FILE", caFile)
            configuration.caFile = caFile
        }
        return configuration
    }
}
