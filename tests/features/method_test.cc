// Copyright 2026 The neardup Authors.

#include "neardup/method.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "neardup/dedup.h"
#include "neardup/presets.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

TEST(MethodTest, EveryPresetRoundTrips) {
  for (const Preset& preset : Presets()) {
    auto m = Method::FromPreset(preset.name);
    ASSERT_TRUE(m.ok()) << preset.name;
    EXPECT_EQ(m->default_k, preset.default_k);
    EXPECT_EQ(m->ShortName(), preset.name);
    auto back = Method::Parse(m->ToString());
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->ToString(), m->ToString());
    EXPECT_EQ(*back, *m);
    // The bare name parses to the same method.
    auto named = Method::Parse(preset.name);
    ASSERT_TRUE(named.ok());
    EXPECT_EQ(*named, *m);
  }
}

TEST(MethodTest, DefaultIsChars5uAndEmptyTextIsTheDefault) {
  const Method d = Method::Default();
  EXPECT_EQ(d.name, std::string(kDefaultMethod));
  EXPECT_EQ(d.pipeline.bits, 128);
  EXPECT_EQ(d.name, "chars5u");
  EXPECT_EQ(d.default_k, 28);
  EXPECT_EQ(d.pipeline.features.kind, FeatureKind::kCharNgrams);
  EXPECT_EQ(d.pipeline.features.ngram, 5);
  EXPECT_EQ(d.pipeline.features.weights, WeightScheme::kUniform);
  auto parsed = Method::Parse("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, d);
}

TEST(MethodTest, LibraryDefaultsAreTheToolDefaults) {
  Method from_options = Method::Default();
  from_options.pipeline = PipelineOptions();
  EXPECT_EQ(from_options, Method::Default());
  EXPECT_EQ(DedupOptions().k, Method::Default().default_k);
}

TEST(MethodTest, CanonicalTextOfTheDefault) {
  EXPECT_EQ(Method::Default().ToString(),
            "chars5u,normalize=nfkc,features=chars:5,weights=uniform,topk=0,bits=128,hash=xxh3,"
            "entropy_threshold=2,hmm=1,k=28");
}

TEST(MethodTest, OverridesFollowTheRules) {
  // Other weights bring their own top-K unless it is given.
  auto m = Method::Parse("chars5,weights=tfidf");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->pipeline.features.top_k, 20);
  m = Method::Parse("tfidf,weights=tf");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->pipeline.features.top_k, 0);
  m = Method::Parse("tfidf,weights=tf,topk=7");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->pipeline.features.top_k, 7);
  // The same weights as the preset keep the preset's top-K.
  m = Method::Parse("tfidf,weights=tfidf");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->pipeline.features.top_k, 20);
  // Another width brings its own k unless it is given.
  m = Method::Parse("chars5,bits=64");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->default_k, 3);
  m = Method::Parse("tfidf,bits=128");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->default_k, 10);
  m = Method::Parse("tfidf,bits=128,k=12");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->default_k, 12);
  m = Method::Parse("chars5,bits=128");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->default_k, 24);
}

TEST(MethodTest, EverySettingSurvivesTheTextForm) {
  auto m = Method::Parse(
      "esimhash,normalize=nfkc+tw2sp+ws,topk=12,entropy_threshold=3.25,hmm=0,"
      "idf=/tmp/a%2Cb%3Dc%25d.txt,user_dict=/x/u1.txt,user_dict=/x/u2.txt,k=9");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->pipeline.normalize.nfkc_casefold);
  EXPECT_EQ(m->pipeline.normalize.t2s, "tw2sp");
  EXPECT_TRUE(m->pipeline.normalize.collapse_whitespace);
  EXPECT_EQ(m->pipeline.features.top_k, 12);
  EXPECT_DOUBLE_EQ(m->pipeline.features.entropy_threshold, 3.25);
  EXPECT_FALSE(m->pipeline.segmenter.hmm);
  EXPECT_EQ(m->pipeline.idf_path, "/tmp/a,b=c%d.txt");
  ASSERT_EQ(m->pipeline.segmenter.user_dicts.size(), 2u);
  EXPECT_EQ(m->pipeline.segmenter.user_dicts[1], "/x/u2.txt");
  EXPECT_EQ(m->default_k, 9);
  auto back = Method::Parse(m->ToString());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToString(), m->ToString());
  EXPECT_NE(m->ShortName(), "esimhash");
}

TEST(MethodTest, BadTextIsAClearError) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"nosuch", "unknown method 'nosuch'"},
      {"chars5,bits=96", "bits must be 64 or 128"},
      {"chars5,bits=x", "not a whole number"},
      {"chars5,k=33", "k must be in [0, 32]"},
      {"tfidf,k=-1", "k must be in [0, 16]"},
      {"chars5,topk=-5", "topk must be >= 0"},
      {"chars5,features=chars:99", "chars"},
      {"chars5,entropy_threshold=nan", "not a finite number"},
      {"chars5,entropy_threshold=0", "entropy_threshold must be a positive number"},
      {"chars5,colour=red", "unknown key 'colour'"},
      {"chars5,bits", "is not key=value"},
      {"chars5,normalize=upper", "unknown normalization 'upper'"},
      {"chars5,hash=sha1", "expected xxh3 or md5"},
      {"chars5,idf=%4", "escape"},
  };
  for (const auto& c : cases) {
    auto m = Method::Parse(c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_TRUE(m.status().IsInvalidArgument()) << c.text;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << m.status().message();
  }
}

TEST(MethodTest, ResolveMakesPathsAbsoluteAndRecordsDigests) {
  const std::string dir = testing::MakeTempDir("method_resolve");
  testing::WriteFile(dir + "/my_idf.txt", "北京 5.0\n大学 3.0\n");
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto m = Method::Parse("tfidf,idf=my_idf.txt");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->Resolve().ok());
  std::filesystem::current_path(before);
  EXPECT_EQ(m->pipeline.idf_path, dir + "/my_idf.txt");
  ASSERT_EQ(m->digests.count("idf"), 1u);
  EXPECT_EQ(m->digests.at("idf").size(), 16u);
  // The stored text means the same thing from any directory.
  auto stored = Method::Parse(m->ToString());
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->VerifyDataFiles().ok());
  EXPECT_EQ(stored->Difference(*m), "");
  // A changed file is found.
  testing::WriteFile(dir + "/my_idf.txt", "北京 6.0\n大学 3.0\n");
  const Status changed = stored->VerifyDataFiles();
  EXPECT_TRUE(changed.IsInvalidArgument());
  EXPECT_NE(changed.message().find("has changed"), std::string::npos) << changed.message();
  std::filesystem::remove(dir + "/my_idf.txt");
  EXPECT_TRUE(stored->VerifyDataFiles().IsNotFound());
  std::filesystem::remove_all(dir);
}

TEST(MethodTest, ResolveDropsDataFilesTheFeaturesDoNotUse) {
  auto m = Method::Parse("chars5u,user_dict=/nonexistent/u.txt");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->Resolve().ok());
  EXPECT_TRUE(m->pipeline.idf_path.empty());
  EXPECT_TRUE(m->pipeline.segmenter.user_dicts.empty());
  EXPECT_TRUE(m->digests.empty());
  EXPECT_EQ(*m, Method::Default());
}

// An IDF table for weights that use none is refused, not dropped: every
// front end (--idf, Python's idf=) parses it here.
TEST(MethodTest, IdfForWeightsWithoutIdfIsRefused) {
  for (const char* text :
       {"chars5u,idf=/x/idf.txt", "tfidf,weights=tf,idf=/x/idf.txt", "minhash,idf=/x/idf.txt"}) {
    auto m = Method::Parse(text);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_TRUE(m.status().IsInvalidArgument()) << text;
    EXPECT_NE(m.status().message().find("idf /x/idf.txt: method"), std::string::npos)
        << m.status().message();
    EXPECT_NE(m.status().message().find("uses no IDF table"), std::string::npos)
        << m.status().message();
  }
  auto m = Method::Parse("chars5u", {{"weights", "tfidf"}, {"idf", "/x/idf.txt"}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->pipeline.idf_path, "/x/idf.txt");
}

TEST(MethodTest, DifferenceNamesTheFirstDifferingSetting) {
  auto a = Method::Parse("chars5");
  auto b = Method::Parse("chars5,bits=64");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->Difference(*b), "bits: 128 here, 64 there");
  auto c = Method::Parse("chars5,k=10");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(a->Difference(*c), "") << "k does not change a fingerprint";
  auto d = Method::Parse("esimhash,entropy_threshold=5");
  auto e = Method::Parse("esimhash");
  ASSERT_TRUE(d.ok() && e.ok());
  EXPECT_EQ(d->Difference(*e), "entropy_threshold: 5 here, 2 there");
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

TEST(MinHashMethodTest, DefaultsRoundTripAndChooseBandsRows) {
  auto m = Method::Parse("minhash");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->is_minhash());
  EXPECT_EQ(m->minhash.num_perm, 128);
  EXPECT_EQ(m->minhash.threshold, 0.5);
  EXPECT_FALSE(m->minhash.exact);
  // The default layout guarantees recall 0.99 at the threshold (35 x 3).
  EXPECT_EQ((BandsRows{m->minhash.bands, m->minhash.rows}), (BandsRows{35, 3}));
  EXPECT_EQ((BandsRows{m->minhash.bands, m->minhash.rows}),
            *BandsRowsForRecall(0.5, 128, kDefaultMinHashRecall));
  EXPECT_GE(MinHashCandidateProbability(0.5, m->minhash.bands, m->minhash.rows), 0.99);
  EXPECT_EQ(m->pipeline.features.kind, FeatureKind::kCharNgrams);
  EXPECT_EQ(m->pipeline.features.ngram, 3);
  EXPECT_EQ(m->ShortName(), "minhash");
  const std::string text = m->ToString();
  EXPECT_TRUE(text.starts_with("minhash,normalize=nfkc,features=chars:3,")) << text;
  EXPECT_NE(text.find(",num_perm=128,bands="), std::string::npos) << text;
  EXPECT_NE(text.find(",threshold=0.5,verify=estimate"), std::string::npos) << text;
  EXPECT_EQ(text.find("bits="), std::string::npos) << text;
  EXPECT_EQ(text.find(",k="), std::string::npos) << text;
  auto back = Method::Parse(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *m);
  EXPECT_EQ(back->Difference(*m), "");
  EXPECT_NE(m->Difference(Method::Default()), "");
}

TEST(MinHashMethodTest, SettingsOverrideAndRoundTrip) {
  const struct {
    const char* text;
    int num_perm, bands, rows;
    double threshold;
    bool exact;
  } cases[] = {
      {"minhash,num_perm=256,bands=32,rows=8", 256, 32, 8, 0.5, false},
      {"minhash,num_perm=64,bands=16", 64, 16, 4, 0.5, false},
      {"minhash,rows=4", 128, 32, 4, 0.5, false},
      {"minhash,verify=exact,features=chars:5", 128, 0, 0, 0.5, true},
      {"minhash,threshold=0.8", 128, -1, -1, 0.8, false},
      {"minhash,num_perm=200,threshold=0.7", 200, -2, -2, 0.7, false},
  };
  for (const auto& c : cases) {
    auto m = Method::Parse(c.text);
    ASSERT_TRUE(m.ok()) << c.text << ": " << m.status().ToString();
    EXPECT_EQ(m->minhash.num_perm, c.num_perm) << c.text;
    EXPECT_EQ(m->minhash.threshold, c.threshold) << c.text;
    EXPECT_EQ(m->minhash.exact, c.exact) << c.text;
    if (c.bands > 0) {
      EXPECT_EQ(m->minhash.bands, c.bands) << c.text;
      EXPECT_EQ(m->minhash.rows, c.rows) << c.text;
    } else if (c.bands < 0) {  // chosen again for the new threshold / num_perm
      EXPECT_EQ((BandsRows{m->minhash.bands, m->minhash.rows}),
                *BandsRowsForRecall(c.threshold, c.num_perm, kDefaultMinHashRecall))
          << c.text;
      EXPECT_GE(MinHashCandidateProbability(c.threshold, m->minhash.bands, m->minhash.rows), 0.99)
          << c.text;
    }
    auto back = Method::Parse(m->ToString());
    ASSERT_TRUE(back.ok()) << m->ToString() << ": " << back.status().ToString();
    EXPECT_EQ(*back, *m) << c.text;
    EXPECT_EQ(back->ToString(), m->ToString());
  }
  // A target recall chooses bands and rows; the stored form keeps them.
  auto m = Method::Parse("minhash,threshold=0.7,recall=0.99");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_GE(MinHashCandidateProbability(0.7, m->minhash.bands, m->minhash.rows), 0.99);
  EXPECT_EQ(m->ToString().find("recall"), std::string::npos);
  EXPECT_EQ(*Method::Parse(m->ToString()), *m);
  // Options given after the text (the command line's) see its keys.
  auto more = Method::Parse("minhash", {{"num_perm", "64"}});
  ASSERT_TRUE(more.ok());
  EXPECT_EQ((BandsRows{more->minhash.bands, more->minhash.rows}),
            *BandsRowsForRecall(0.5, 64, kDefaultMinHashRecall));
}

TEST(MinHashMethodTest, BadSettingsAreNamed) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"minhash,num_perm=0", "num_perm must be in [1, 1024]"},
      {"minhash,num_perm=5000", "num_perm must be in [1, 1024]"},
      {"minhash,threshold=0", "threshold must be in (0, 1]"},
      {"minhash,threshold=1.5", "threshold must be in (0, 1]"},
      {"minhash,threshold=nan", "not a finite number"},
      {"minhash,bands=64,rows=4", "bands x rows <= num_perm"},
      {"minhash,bands=0,rows=4", "bands and rows must be >= 1"},
      {"minhash,bands=200", "bands and rows must be >= 1"},
      {"minhash,recall=1", "recall: must be in (0, 1)"},
      {"minhash,recall=0.9,bands=8", "give recall or bands/rows, not both"},
      {"minhash,verify=maybe", "expected estimate or exact"},
      {"minhash,bits=64", "bits does not apply to minhash"},
      {"minhash,k=3", "k does not apply to minhash"},
      {"chars5,num_perm=64", "num_perm applies to minhash only"},
      {"tfidf,threshold=0.5", "threshold applies to minhash only"},
  };
  for (const auto& c : cases) {
    auto m = Method::Parse(c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_TRUE(m.status().IsInvalidArgument()) << c.text;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << m.status().message();
  }
}

}  // namespace
}  // namespace neardup
