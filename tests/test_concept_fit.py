"""Known answers: when the resolved ICD concept fits a statement well enough to call its code missing."""
from __future__ import annotations

from ehrlib.pipeline.offline.concept_fit import names_a_condition, title_head, weak_concept
from ehrlib.pipeline.offline.icd_match import resolve
from ehrlib.pipeline.offline.terminology import Terminology, Title

DICTIONARY = Terminology([
    Title("diagnoses_icd", "L89622", "Pressure ulcer of right elbow, stage 2"),
    Title("diagnoses_icd", "1589", "Malignant neoplasm of peritoneum, unspecified"),
    Title("diagnoses_icd", "24901", "Secondary diabetes mellitus without mention of complication, uncontrolled"),
    Title("diagnoses_icd", "486", "Pneumonia, organism unspecified"),
    Title("diagnoses_icd", "00845", "Intestinal infection due to Clostridium difficile"),
    Title("diagnoses_icd", "I26", "Pulmonary embolism"),
    Title("diagnoses_icd", "I2699", "Other pulmonary embolism without acute cor pulmonale"),
    Title("diagnoses_icd", "I2602", "Saddle embolus of pulmonary artery with acute cor pulmonale"),
    Title("diagnoses_icd", "I269", "Pulmonary embolism without acute cor pulmonale"),
    Title("procedures_icd", "8675", "Revision of pedicle or flap graft"),
    Title("procedures_icd", "5123", "Laparoscopic cholecystectomy"),
])


def _concepts(phrase, tables=("diagnoses_icd", "procedures_icd")):
    return resolve(phrase, DICTIONARY, [], tables).concepts


def test_title_head_is_what_comes_before_the_first_complement():
    assert title_head("Pressure ulcer of right elbow, stage 2") == ("pressure", "ulcer")
    assert title_head("Intestinal infection due to Clostridium difficile") == ("intestinal", "infection")
    assert title_head("Pneumonia, organism unspecified") == ("pneumon",)


def test_a_site_or_qualifier_alone_names_no_condition():
    # an entry cut from "Decubitus ulcer, right elbow" / "... metastatic to omentum, peritoneum" / "DM, uncontrolled"
    for phrase in ("right elbow", "peritoneum", "uncontrolled"):
        concepts = _concepts(phrase)
        assert concepts, phrase
        assert not names_a_condition(concepts), phrase


def test_a_condition_named_by_its_head_is_a_condition():
    for phrase in ("pneumonia", "Clostridium difficile intestinal infection", "laparoscopic cholecystectomy"):
        assert names_a_condition(_concepts(phrase)), phrase
    assert names_a_condition(())  # nothing resolved: nothing to call a site


def test_a_neighbouring_title_sharing_generic_words_is_weak():
    # "AV" unstated by the title, "pedicle" and "flap" unstated by the statement
    assert weak_concept(_concepts("Revision of AV graft", ("procedures_icd",)))
    # the title states all the statement says, and more: it is the statement told in detail
    assert not weak_concept(_concepts("pneumonia"))
    assert not weak_concept(_concepts("laparoscopic cholecystectomy"))
    assert not weak_concept(())


def test_a_code_under_the_concepts_category_header_is_its_code():
    billed = [Title("diagnoses_icd", "I2602", "Saddle embolus of pulmonary artery with acute cor pulmonale")]
    res = resolve("Saddle pulmonary embolism", DICTIONARY, billed, ("diagnoses_icd",))
    assert "I26" in [m.code for m in res.concepts]
    assert [t.code for t in res.candidates] == ["I2602"]
    # a billed code under another header is not
    other = [Title("diagnoses_icd", "I2699", "Other pulmonary embolism without acute cor pulmonale")]
    assert resolve("saddle embolus with acute cor pulmonale", DICTIONARY, other, ("diagnoses_icd",)).candidates == ()
