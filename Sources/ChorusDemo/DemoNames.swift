/// Names and majors for demo users: Korean and Latin, so that search (choseong included) has something to find.
enum DemoNames {
    static let koreanFamily = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권"]
    static let koreanGiven = [
        "민수", "서연", "지훈", "하은", "도윤", "수아", "예준", "지우", "시우", "하린", "주원", "서윤", "지호", "채원",
        "현우", "유진", "준서", "다은", "건우", "소율",
    ]
    static let latinGiven = [
        "Ana", "Ben", "Chloé", "David", "Elena", "Felix", "Grace", "Hugo", "Iris", "José", "Karin", "Liam", "Maya",
        "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Zoë",
    ]
    static let latinFamily = [
        "Almeida", "Berg", "Costa", "Dubois", "Evans", "Fischer", "García", "Hansen", "Ivanova", "Jensen", "Kowalski",
        "Lopez", "Müller", "Novak", "Olsen", "Petit", "Rossi", "Silva", "Tanaka", "Weber",
    ]
    static let majors = [
        "컴퓨터공학", "경영학", "심리학", "국어국문학", "전자공학", "Computer Science", "Economics", "Biology", "Design",
        "Mathematics", "Philosophy", "Music", "",
    ]
    static let words = [
        "오늘", "날씨", "커피", "sunset", "coffee", "study", "weekend", "서울", "travel", "music", "lunch", "campus",
        "축제", "library", "exam", "photo", "새벽", "run", "book", "friends",
        // Hashtags, so that the demo's hashtag pages and search have something to show.
        "#캠퍼스", "#Coffee", "#seoul", "#축제", "#StudyWithMe",
    ]

    static func name(using generator: inout SeededGenerator) -> String {
        if Bool.random(using: &generator) {
            return koreanFamily.randomElement(using: &generator)! + koreanGiven.randomElement(using: &generator)!
        }
        return latinGiven.randomElement(using: &generator)! + " " + latinFamily.randomElement(using: &generator)!
    }

    static func sentence(words count: Int, using generator: inout SeededGenerator) -> String {
        (0..<count).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ")
    }
}
