import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// The caller's devices for pushes, and what they get pushes about.
struct DeviceRoutes {
    let endpoints: Endpoints

    struct Registration: Decodable {
        let platform: String
        let token: String
        let environment: String?
        let locale: String?

        private enum CodingKeys: String, CodingKey { case platform, token, environment, locale }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            platform = try container.decode(String.self, forKey: .platform)
            token = try container.decode(String.self, forKey: .token)
            environment = try container.decodeUnlessMissing(String.self, forKey: .environment)
            locale = try container.decodeUnlessMissing(String.self, forKey: .locale)
        }
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.post("me/devices") { request, context in
            let caller = try context.requireCaller()
            let (body, bytes) = try await JSONBody.decode(Registration.self, from: request)
            let command = Command.registerDevice(
                user: caller.user, platform: try Endpoints.choice(body.platform, field: "platform"), token: body.token,
                environment: try body.environment.map { try Endpoints.choice($0, field: "environment") },
                locale: body.locale)
            return try await endpoints.write(request, context: context, requestBody: bytes, command: command) {
                view, result, json in
                guard let id = result.createdID.map(DeviceID.init(unchecked:)),
                    let device = try view.device(id, of: caller.user)
                else { throw APIError.unavailable("the read models do not show the device yet") }
                DeviceJSON(device).write(to: &json)
                // Made by this registration, or registered before and refreshed.
                return device.registeredAt == result.position ? .created : .ok
            }
        }
        endpoints.getPage(
            group, "me/devices", { view, caller, page in try view.devices(of: caller.user, page: page) },
            render: DeviceJSON.init)
        group.delete("me/devices/:id") { request, context in
            let caller = try context.requireCaller()
            let device = try Endpoints.pathID(context, "id", as: DeviceID.self)
            return try await endpoints.writeAnsweringNothing(
                request, context: context, command: .forgetDevice(user: caller.user, device: device))
        }
        group.get("me/push-settings") { request, context in
            let caller = try context.requireCaller()
            return try await endpoints.read(request) { view in PushSettingsJSON(try view.pushSettings(of: caller.user))
            }
        }
        group.patch("me/push-settings") { request, context in
            let caller = try context.requireCaller()
            let bytes = try await JSONBody.collect(request)
            let fields = try JSONBody.decode([String: String].self, from: bytes)
            var changes: [PushKind: PushLevel] = [:]
            for (name, value) in fields {
                guard let kind = PushKind(rawValue: name) else {
                    throw APIError(
                        DomainError(
                            .invalidField,
                            "\(name) is not a kind of push: "
                                + PushKind.allCases.map(\.rawValue).joined(separator: ", ")))
                }
                changes[kind] = try Endpoints.choice(value, field: name)
            }
            return try await endpoints.write(
                request, context: context, requestBody: bytes,
                command: .changePushSettings(user: caller.user, changes: changes)
            ) { view, _ in PushSettingsJSON(try view.pushSettings(of: caller.user)) }
        }
    }
}

/// A device as its user sees it: never its token.
struct DeviceJSON: JSONWritable {
    let device: Device

    init(_ device: Device) { self.device = device }

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", device.id.rawValue)
            $0.field("platform", device.platform.rawValue)
            $0.field("environment", device.environment.rawValue)
            $0.field("locale", device.locale)
            $0.field("createdAt", device.createdAt)
            $0.field("lastSeenAt", device.lastSeenAt)
        }
    }
}

/// Every kind of push, with its level.
struct PushSettingsJSON: JSONWritable {
    let settings: [PushKind: PushLevel]

    init(_ settings: [PushKind: PushLevel]) { self.settings = settings }

    func write(to json: inout JSONWriter) {
        json.object { object in
            for kind in PushKind.allCases {
                object.field(named: kind.rawValue, (settings[kind] ?? .all).rawValue)
            }
        }
    }
}
