import Foundation

extension ConversionSchema.Reader {
    typealias Campaign = ConversionSchema.Campaign
    typealias Campaigns = ConversionSchema.Campaigns
    typealias Network = ConversionSchema.Network
    typealias Refusal = ConversionSchema.Refusal

    /// The campaign names of an app or a network: its `campaigns` (by source identifier) and `campaign-ids` (by
    /// SKAdNetwork 1.0-3.0 campaign id) members. `app` is the app entry's period, which every dated campaign must
    /// share a day with.
    func campaigns(_ members: [(name: String, value: JSONValue)], _ path: [String], version: Int,
                   app: Campaign) throws(Refusal) -> Campaigns {
        let bySource = try campaignLists(members, "campaigns", path, version: version, app: app,
                                         known: Self.sourceIdentifiers)
        var byID: [UInt64: [Campaign]] = [:]
        for (name, list) in try campaignLists(members, "campaign-ids", path, version: version, app: app,
                                              known: Self.campaignIDs) {
            byID[UInt64(name)!] = list  // a known name: 1 to 100 in decimal
        }
        return Campaigns(bySourceIdentifier: bySource, byCampaignID: byID)
    }

    /// The campaigns of the member `key` (`campaigns`, `campaign-ids`) by their member names, which must be among
    /// `known`'s. A value is a non-empty name; from version 2 also a list of dated campaigns.
    private func campaignLists(_ members: [(name: String, value: JSONValue)], _ key: String, _ path: [String],
                               version: Int, app: Campaign,
                               known: (JSONValue) -> [String]) throws(Refusal) -> [String: [Campaign]] {
        guard let value = member(members, key) else { return [:] }
        var lists: [String: [Campaign]] = [:]
        for (name, campaign) in try object(value, path + [key], what: "\"\(key)\"", known: known(value)) {
            let campaignPath = path + [key, name]
            if let text = campaign.stringValue, !text.isEmpty {
                lists[name] = [Campaign(name: text, validFrom: nil, validUntil: nil)]
            } else if version >= 2, case .array(let entries) = campaign {
                lists[name] = try datedCampaigns(entries, campaignPath, identifier: name, app: app)
            } else if version >= 2 {
                throw refuse(campaignPath, "a campaign must be a non-empty name or a non-empty list of "
                    + "{\"name\", \"valid-from\", \"valid-until\"}")
            } else {
                var hint = ""
                if case .array = campaign { hint = " (a list of dated campaigns needs \"schema-version\": 2)" }
                throw refuse(campaignPath, "a campaign name must be a non-empty string" + hint)
            }
        }
        return lists
    }

    /// A list of `{"name", "valid-from", "valid-until"}`: no two share a day, and each shares one with the app.
    private func datedCampaigns(_ entries: [JSONValue], _ path: [String], identifier: String,
                                app: Campaign) throws(Refusal) -> [Campaign] {
        guard !entries.isEmpty else {
            throw refuse(path, "the campaigns of \(JSONValue.quoted(identifier)) must be a non-empty list")
        }
        var campaigns: [Campaign] = []
        for (position, entry) in entries.enumerated() {
            let entryPath = path + [String(position)]
            let members = try object(entry, entryPath, what: "a dated campaign",
                                     known: ["name", "valid-from", "valid-until"])
            guard let name = try displayName(member(members, "name"), entryPath + ["name"],
                                             what: "a dated campaign's \"name\"") else {
                throw refuse(entryPath, "a dated campaign needs \"name\"")
            }
            var from: Date?
            if let fromValue = member(members, "valid-from") {
                from = try day(fromValue, entryPath + ["valid-from"])
            }
            var until: Date?
            if let untilValue = member(members, "valid-until") {
                let last = try day(untilValue, entryPath + ["valid-until"])
                if let from, last < from {
                    throw refuse(entryPath + ["valid-until"], "\"valid-until\" is before \"valid-from\"")
                }
                until = last.addingTimeInterval(86_400)
            }
            let campaign = Campaign(name: name, validFrom: from, validUntil: until)
            guard campaign.overlaps(app) else {
                throw refuse(entryPath, "campaign \(JSONValue.quoted(name)) of \(JSONValue.quoted(identifier)) "
                    + "never applies: its days are outside the app's period")
            }
            if let other = campaigns.first(where: { $0.overlaps(campaign) }) {
                throw refuse(entryPath, "campaigns \(JSONValue.quoted(other.name)) and \(JSONValue.quoted(name)) "
                    + "of \(JSONValue.quoted(identifier)) share days (\(Self.days(of: other)) and "
                    + "\(Self.days(of: campaign))): one identifier names one campaign at a time")
            }
            campaigns.append(campaign)
        }
        return campaigns
    }

    /// An app's `networks`: each names its signed identifier once, and its name once, in the app's entry.
    func networks(_ value: JSONValue?, _ path: [String], app: Campaign) throws(Refusal) -> [Network] {
        guard let value else { return [] }
        guard case .array(let list) = value else {
            throw refuse(path, "\"networks\" must be an array, not \(value.typeName)")
        }
        var networks: [Network] = []
        for (position, entry) in list.enumerated() {
            let entryPath = path + [String(position)]
            let members = try object(entry, entryPath, what: "a network",
                                     known: ["ad-network-id", "name", "campaigns", "campaign-ids"])
            guard let idValue = member(members, "ad-network-id") else {
                throw refuse(entryPath, "a network needs \"ad-network-id\" (the identifier its postbacks sign)")
            }
            guard let id = idValue.stringValue, !id.isEmpty else {
                throw refuse(entryPath + ["ad-network-id"], "\"ad-network-id\" must be a non-empty string")
            }
            guard let name = try displayName(member(members, "name"), entryPath + ["name"],
                                             what: "a network's \"name\"") else {
                throw refuse(entryPath, "a network needs \"name\" (its display name)")
            }
            let identifier = ExactString(id)
            if networks.contains(where: { $0.adNetworkIdentifier == identifier }) {
                throw refuse(entryPath + ["ad-network-id"], "network \(JSONValue.quoted(id)) is given twice "
                    + "in this app")
            }
            if let other = networks.first(where: { $0.name.utf8.elementsEqual(name.utf8) }) {
                let first = JSONValue.quoted(other.adNetworkIdentifier.description)
                throw refuse(entryPath + ["name"], "networks \(first) and \(JSONValue.quoted(id)) have the same "
                    + "name \(JSONValue.quoted(name)): the records, the report and the metrics could not tell them "
                    + "apart")
            }
            let campaigns = try self.campaigns(members, entryPath, version: 2, app: app)
            networks.append(Network(adNetworkIdentifier: identifier, name: name, campaigns: campaigns))
        }
        return networks
    }

    /// A display name: nil when absent, else a non-empty string.
    func displayName(_ value: JSONValue?, _ path: [String], what: String) throws(Refusal) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue, !text.isEmpty else {
            throw refuse(path, "\(what) must be a non-empty string")
        }
        return text
    }

    /// `from YYYY-MM-DD until YYYY-MM-DD`, for a message.
    private static func days(of campaign: Campaign) -> String {
        let from = campaign.validFrom.map { "from " + RFC3339Timestamp.string($0).prefix(10) } ?? "from the start"
        let until = campaign.validUntil.map {
            "until " + RFC3339Timestamp.string($0.addingTimeInterval(-86_400)).prefix(10)
        } ?? "open-ended"
        return "\(from) \(until)"
    }
}
