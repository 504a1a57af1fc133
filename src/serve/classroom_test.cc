// What people type when they run a class, read as a school's files and fingers give it: invite codes,
// student ids, addresses, times with and without zones, rosters as spreadsheets export them, and
// CSV written so that a spreadsheet runs nothing a learner typed.
#include "serve/classroom.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "serve/store_internal.h"

namespace cudojo {
namespace {

TEST(ClassroomInput, InviteCodesForgiveCaseSpacesAndDashes) {
  EXPECT_EQ(normalize_invite_code("k7qm-3xd9 at"), "K7QM3XD9AT");
  EXPECT_EQ(normalize_invite_code(" K7QM3XD9AT\t"), "K7QM3XD9AT");
  EXPECT_EQ(normalize_invite_code(std::string(500, 'a')).size(), 64u);  // never longer than any code
}

TEST(ClassroomInput, NamesAreLettersAReaderSees) {
  for (const char* good : {"Ada Lovelace", "Zo\u00eb O'Neil", "Jos\u00e9 N\u00fa\u00f1ez", "Jose\u0301",
                           "\u041c\u0430\u0440\u0438\u044f", "\u5f20\u4f1f", "\u0645\u0631\u064a\u0645",
                           "\ud55c\uc9c0\ubbfc", "Nguy\u1ec5n V\u0103n"})
    EXPECT_TRUE(store_internal::checked_name(good)) << good;
  // Blank-looking fillers, joiners, bidi and other format characters, spaces of other widths, symbols
  // that imitate ASCII, and marks without a letter or piled up.
  for (const char* bad : {"Alice\u3164", "Alice\u034f", "Alice\u2800", "\u2800", "\uffa0", "\u115f",
                          "A\u061cB", "A\u180eB", "Alice\u1680Smith", "\uff1dSUM", "A\u200bB", "A\u202eB",
                          "\u0301A", "A\u0301\u0301\u0301", "Ada\u00a0L", "A\u00adB"})
    EXPECT_FALSE(store_internal::checked_name(bad)) << bad;
  EXPECT_TRUE(class_name_problem("Class\u202eevil"));
  EXPECT_TRUE(class_name_problem("Cl\u200bass"));
  EXPECT_TRUE(class_name_problem("Class\u0085x"));
  EXPECT_FALSE(class_name_problem("GPU \u2014 Programmation parall\u00e8le"));
}

TEST(ClassroomInput, StudentIdsAndAddressesAreCheckedWithASentence) {
  EXPECT_FALSE(student_id_problem("s2024-001.a_b"));
  for (const char* bad : {"", "a b", "s;1", "\xC3\xA9t\xC3\xA9"}) EXPECT_TRUE(student_id_problem(bad)) << bad;
  EXPECT_TRUE(student_id_problem(std::string(65, '1')));
  EXPECT_FALSE(email_problem("ada@example.edu"));
  for (const char* bad : {"ada", "@example.edu", "ada@", "a@b@c", "ada @example.edu", "ada@ex\nample.edu",
                          "\u202emoc.evil@x", "a\u200b@x", "a\u0085@x"})
    EXPECT_TRUE(email_problem(bad)) << bad;
  EXPECT_FALSE(class_name_problem("GPU Programming 2027 (Section 2)"));
  for (const char* bad : {"", " padded", "tab\there"}) EXPECT_TRUE(class_name_problem(bad)) << bad;
  EXPECT_TRUE(class_name_problem(std::string(81, 'x')));
  EXPECT_FALSE(class_name_problem(std::string(80, 'x')));
}

TEST(ClassroomInput, TimesNeedAZoneUnlessTypedOnTheServer) {
  EXPECT_EQ(parse_time("2026-12-15T23:59:00Z"), 1797379140.0);
  EXPECT_EQ(parse_time("2026-12-15T23:59Z"), 1797379140.0);
  EXPECT_EQ(parse_time("2026-12-16T00:59:00+01:00"), 1797379140.0);
  EXPECT_EQ(parse_time("2026-12-15T18:59:00.5-0500"), 1797379140.5);
  EXPECT_EQ(parse_time("2026-12-15 23:59:00z"), 1797379140.0);
  EXPECT_FALSE(parse_time("2026-12-15T23:59:00"));  // no zone: which midnight?
  for (const char* bad :
       {"soon", "2026-02-30T00:00Z", "2026-13-01T00:00Z", "2026-12-15T24:00Z", "2026-12-15T23:59+25:00",
        "2026-12-15T23:59:00Zjunk", "2026/12/15 23:59Z", "2026-12-15T23:59:00.5.5Z", "2026-12-15T23:59:60Z",
        "2026-12-15T23:59+14:60", "2026-1-1T1:1Z", "2026-12-15T23:59:00+1:00"})
    EXPECT_FALSE(parse_time(bad)) << bad;
  // On the server machine a time without a zone is its own zone's.
  setenv("TZ", "Europe/Berlin", 1);
  tzset();
  EXPECT_EQ(parse_time("2026-12-16 00:59", true), 1797379140.0);
  unsetenv("TZ");
  tzset();
  EXPECT_EQ(iso_time(1797379140.7), "2026-12-15T23:59:00Z");
}

TEST(ClassroomInput, ARosterIsReadAsSpreadsheetsExportIt) {
  const ParsedRoster parsed = parse_roster_csv(
      "\xEF\xBB\xBF"
      "E-mail,Name,Student ID,Group\r\n"
      "ada@example.edu,\"Lovelace,  Ada\",s1,G1\r\n"
      "\r\n"
      ",\"Grace \"\"Amazing\"\" Hopper\",s2,G2\r\n"
      "zoe@example.edu,Zo\xC3\xAB   O'Neil,s3,G1",
      100);
  // The comma in Ada's quoted name is not a name character; the rest are read, columns by the header.
  ASSERT_EQ(parsed.problems.size(), 2u);
  EXPECT_EQ(parsed.problems[0].line, 2);
  EXPECT_EQ(parsed.problems[1].line, 4);  // the doubled quotes are quotes, and quotes are not allowed either
  ASSERT_EQ(parsed.rows.size(), 1u);
  EXPECT_EQ(parsed.rows[0].student_id, "s3");
  EXPECT_EQ(parsed.rows[0].name, "Zo\xC3\xAB O'Neil");  // runs of spaces become one
  EXPECT_EQ(parsed.rows[0].email, "zoe@example.edu");
}

TEST(ClassroomInput, ARosterWithoutAHeaderIsStudentIdNameEmail) {
  const ParsedRoster parsed = parse_roster_csv("s1,Ada\ns2,Bob,bob@example.edu\n", 100);
  ASSERT_TRUE(parsed.problems.empty());
  ASSERT_EQ(parsed.rows.size(), 2u);
  EXPECT_EQ(parsed.rows[1].email, "bob@example.edu");
  EXPECT_EQ(parse_roster_csv("name,email\nAda,a@b.c\n", 100).problems.at(0).line, 1);  // no id column
}

TEST(ClassroomInput, EveryProblemIsReportedWithItsLineAndTheRosterIsBounded) {
  const ParsedRoster parsed = parse_roster_csv("s1,Ada\ns1,Bob\ns3,Ada\ns4,\"open\nquote", 100);
  std::vector<int> lines;
  for (const RosterProblem& problem : parsed.problems) lines.push_back(problem.line);
  EXPECT_EQ(lines, (std::vector<int>{4, 2, 3}));  // the open quote is found while reading; then row by row
  EXPECT_FALSE(parse_roster_csv("s1,a\ns2,b\ns3,c\n", 2).problems.empty());
  EXPECT_TRUE(parse_roster_csv("s1,a\ns2,b\n", 2).problems.empty());
}

TEST(ClassroomInput, CsvFieldsAreQuotedAndNeverAFormula) {
  EXPECT_EQ(csv_field("Ada"), "Ada");
  EXPECT_EQ(csv_field("Lovelace, Ada"), "\"Lovelace, Ada\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(csv_field("-2+3"), "'-2+3");
  EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_field("+1 555"), "'+1 555");
  EXPECT_EQ(csv_field("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(ClassroomAccess, AnAssistantReadsAnInstructorChangesAndOthersHaveNothing) {
  StaffAccount staff;
  staff.roles = {{1, ClassRole::kInstructor}, {2, ClassRole::kAssistant}};
  EXPECT_EQ(class_access(staff, 1), ClassAccess::kChange);
  EXPECT_EQ(class_access(staff, 2), ClassAccess::kRead);
  EXPECT_EQ(class_access(staff, 3), ClassAccess::kNone);
  staff.admin = true;
  EXPECT_EQ(class_access(staff, 3), ClassAccess::kChange);
  EXPECT_EQ(staff_actor(staff, 2).kind, "admin");
  staff.admin = false;
  EXPECT_EQ(staff_actor(staff, 2).kind, "ta");
  EXPECT_EQ(staff_actor(staff, 1).kind, "instructor");
}

TEST(ClassroomGrid, LatenessIsBySubmissionTime) {
  const std::vector<Deadline> deadlines = {{"reduction/3", 100, false}};
  EXPECT_FALSE(is_late(deadlines, "reduction/3", 100));
  EXPECT_TRUE(is_late(deadlines, "reduction/3", 100.5));
  EXPECT_FALSE(is_late(deadlines, "reduction/2", 1e9));
}

}  // namespace
}  // namespace cudojo
