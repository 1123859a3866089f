"""Known answers for diagnosis/procedure names matched to ICD titles
(ehrlib.pipeline.offline.terminology)."""
from __future__ import annotations

import duckdb
import pytest

from ehrlib.pipeline.offline.terminology import Terminology, Title, normalise
from ehrlib.schema import detect_flavor, schema_map

TITLES = [
    Title("diagnoses_icd", "41071", "Subendocardial infarction, initial episode of care"),
    Title("diagnoses_icd", "5849", "Acute kidney failure, unspecified"),
    Title("diagnoses_icd", "5859", "Chronic kidney disease, unspecified"),
    Title("diagnoses_icd", "4280", "Congestive heart failure, unspecified"),
    Title("diagnoses_icd", "42823", "Acute on chronic systolic heart failure"),
    Title("diagnoses_icd", "486", "Pneumonia, organism unspecified"),
    Title("diagnoses_icd", "2724", "Other and unspecified hyperlipidemia"),
    Title("diagnoses_icd", "4019", "Unspecified essential hypertension"),
    Title("diagnoses_icd", "42731", "Atrial fibrillation"),
    Title("diagnoses_icd", "5990", "Urinary tract infection, site not specified"),
    Title("diagnoses_icd", "496", "Chronic airway obstruction, not elsewhere classified"),
    Title("diagnoses_icd", "5789", "Hemorrhage of gastrointestinal tract, unspecified"),
    Title("diagnoses_icd", "51881", "Acute respiratory failure"),
    Title("procedures_icd", "9604", "Insertion of endotracheal tube"),
    Title("procedures_icd", "3893", "Venous catheterization, not elsewhere classified"),
    Title("procedures_icd", "9904", "Transfusion of packed cells"),
    Title("procedures_icd", "3722", "Left heart cardiac catheterization"),
    Title("procedures_icd", "4516", "Esophagogastroduodenoscopy [EGD] with closed biopsy"),
    Title("procedures_icd", "9672", "Continuous invasive mechanical ventilation for 96 consecutive hours or more"),
]


@pytest.fixture(scope="module")
def term():
    return Terminology(TITLES)


def _best(term, phrase, **kw):
    got = term.match(phrase, **kw)
    return got[0].code if got else None


def test_normalise_drops_icd_boilerplate_plurals_and_word_order():
    assert normalise("Other and unspecified hyperlipidemia") == ("hyperlipidem",)
    assert normalise("Hyperlipidemias") == ("hyperlipidem",)
    assert normalise("Pneumonia, organism unspecified") == ("pneumon",)
    # noun and adjective endings meet; distinct short words stay apart
    assert normalise("endoscopy") == normalise("endoscopic") and normalise("hypoxia") == normalise("hypoxic")
    assert normalise("artery") != normalise("arterial")
    assert set(normalise("failure, kidney, acute")) == set(normalise("Acute kidney failure NOS"))


@pytest.mark.parametrize("phrase, code", [
    ("NSTEMI", "41071"),                      # abbreviation -> ICD wording
    ("acute kidney injury", "5849"),          # clinical synonym
    ("AKI", "5849"),
    ("CHF exacerbation", "4280"),             # extra word in a longer phrase
    ("acute on chronic systolic CHF", "42823"),
    ("Pneumonia", "486"),                     # "... organism unspecified"
    ("hyperlipidemia", "2724"),               # "Other and unspecified ..."
    ("HTN", "4019"),
    ("Afib with RVR", "42731"),
    ("urinary tract infections", "5990"),     # plural
    ("COPD", "496"),
    ("GI bleed", "5789"),
    ("gastrointestinal hemorrhage", "5789"),  # word order
    ("hypoxemic respiratory failure", "51881"),
])
def test_diagnosis_names(term, phrase, code):
    assert _best(term, phrase, tables=["diagnoses_icd"]) == code


@pytest.mark.parametrize("phrase, code", [
    ("Intubation", "9604"), ("Central line placement", "3893"), ("PRBC transfusion", "9904"),
    ("cardiac catheterization", "3722"), ("EGD", "4516"), ("mechanical ventilation", "9672"),
])
def test_procedure_names(term, phrase, code):
    assert _best(term, phrase, tables=["procedures_icd"]) == code


@pytest.mark.parametrize("phrase", ["acute", "left", "chronic kidney failure extra words here",
                                    "cellulitis", "diabetic ketoacidosis", ""])
def test_non_matches(term, phrase):
    assert term.match(phrase) == []


def test_acute_kidney_is_not_chronic_kidney(term):
    assert [m.code for m in term.match("acute kidney injury")] == ["5849"]
    assert [m.code for m in term.match("CKD")] == ["5859"]


def test_restricted_to_billed_codes_and_tables(term):
    assert term.match("pneumonia", codes=["5849"]) == []
    assert term.match("intubation", tables=["diagnoses_icd"]) == []


@pytest.mark.parametrize("layout", ["mimic3", "mimic4"])
def test_titles_from_both_database_layouts(layout, synth_db, synth_db_mimic4):
    path = synth_db if layout == "mimic3" else synth_db_mimic4
    con = duckdb.connect(str(path), read_only=True)
    try:
        term = Terminology.from_database(con, schema_map(detect_flavor(con)))
        title = con.execute(f"SELECT {schema_map(layout).select_list('d_icd_diagnoses', ('long_title',))} "
                            f"FROM {schema_map(layout).table('d_icd_diagnoses').ref} LIMIT 1").fetchone()[0]
    finally:
        con.close()
    assert len(term) > 0
    assert any(m.title == title for m in term.match(title, limit=50))


def test_synonym_data_typo_is_rejected():
    import json

    import jsonschema

    from ehrlib.datafiles import data_text, load_data

    broken = json.loads(json.dumps(load_data("terminology_synonyms.yaml")))
    broken["synonyms"]["acute kidney failure"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json.loads(data_text("schemas/terminology_synonyms.schema.json")))


def test_without_clause_is_not_content():
    assert normalise("Cirrhosis of liver without mention of alcohol") == ("cirrhosis", "liver")
    assert normalise("Diabetes mellitus without mention of complication, type II") == ("diabete", "mellitus", "type",
                                                                                       "ii")
    term = Terminology([Title("diagnoses_icd", "5715", "Cirrhosis of liver without mention of alcohol")])
    assert [m.code for m in term.match("Cirrhosis")] == ["5715"]


QUALIFIED = [
    Title("diagnoses_icd", "45620", "Esophageal varices in diseases classified elsewhere, with bleeding"),
    Title("diagnoses_icd", "45621", "Esophageal varices in diseases classified elsewhere, without mention of bleeding"),
    Title("diagnoses_icd", "42822", "Chronic systolic heart failure"),
    Title("diagnoses_icd", "42821", "Acute systolic heart failure"),
    Title("diagnoses_icd", "I82621", "Acute embolism and thrombosis of deep veins of right upper extremity"),
    Title("diagnoses_icd", "I82622", "Acute embolism and thrombosis of deep veins of left upper extremity"),
]


def test_a_stated_qualifier_decides_between_close_titles():
    term = Terminology(QUALIFIED)
    assert [m.code for m in term.match("bleeding varices")] == ["45620"]
    assert [m.code for m in term.match("acute systolic CHF")] == ["42821"]
    assert _best(term, "left arm DVT") == "I82622"
    assert "I82621" not in [m.code for m in term.match("left upper extremity DVT")]


@pytest.mark.parametrize("phrase, title", [
    ("DIC", "Defibrination syndrome"),
    ("cardiopulmonary bypass", "Extracorporeal circulation auxiliary to open heart surgery"),
    ("IABP placement", "Implant of pulsation balloon"),
    ("Blakemore tube", "Insertion of Sengstaken tube"),
    ("pituitary macroadenoma", "Benign neoplasm of pituitary gland and craniopharyngeal duct"),
    ("shock liver", "Acute and subacute hepatic failure without coma"),
    ("hypoxemic resp failure", "Acute respiratory failure with hypoxia"),   # two rewrites in a row
])
def test_clinical_names_of_icd_concepts(phrase, title):
    term = Terminology([Title("diagnoses_icd", "x", title), Title("diagnoses_icd", "y", "Chronic kidney disease")])
    assert _best(term, phrase) == "x"


def test_a_stated_qualifier_the_title_leaves_out_narrows_but_a_fuller_title_ranks_first():
    term = Terminology([Title("procedures_icd", "5122", "Cholecystectomy"),
                        Title("diagnoses_icd", "4280", "Congestive heart failure, unspecified"),
                        Title("diagnoses_icd", "42823", "Acute on chronic systolic heart failure")])
    assert _best(term, "laparoscopic-converted open cholecystectomy") is None  # "laparoscopic" is content
    assert _best(term, "Open cholecystectomy") == "5122"
    assert _best(term, "acute on chronic systolic CHF") == "42823"


def test_deidentification_brackets_and_asides_are_not_words():
    term = Terminology([Title("procedures_icd", "370", "Pericardiocentesis")])
    assert _best(term, "[**3-14**] pericardiocentesis (bedside, 400 cc)") == "370"


def test_a_kind_word_is_content_not_a_qualifier():
    # "septic" names the kind of shock: a billed "Severe sepsis" is not "septic shock"
    term = Terminology([Title("diagnoses_icd", "99592", "Severe sepsis")])
    assert term.match("septic shock") == []
    term = Terminology([Title("diagnoses_icd", "R570", "Cardiogenic shock")])
    assert term.match("septic shock") == []


def test_a_category_header_is_no_leaf():
    from ehrlib.pipeline.offline.terminology import Terminology, Title

    t = Terminology([Title("diagnoses_icd", "I48", "Atrial fibrillation and flutter"),
                     Title("diagnoses_icd", "I480", "Paroxysmal atrial fibrillation"),
                     Title("diagnoses_icd", "4273", "Made-up header"), Title("procedures_icd", "42731", "Made-up")])
    assert not t.is_leaf("diagnoses_icd", "I48") and t.is_leaf("diagnoses_icd", "I480")
    assert t.is_leaf("diagnoses_icd", "4273")  # a code of the other table is not under it


def test_clinical_names_of_icd_concepts():
    from ehrlib.pipeline.offline.terminology import Terminology, Title

    t = Terminology([Title("diagnoses_icd", "261", "Nutritional marasmus"),
                     Title("diagnoses_icd", "25541", "Glucocorticoid deficiency"),
                     Title("diagnoses_icd", "570", "Acute and subacute necrosis of liver"),
                     Title("diagnoses_icd", "27739", "Other amyloidosis"),
                     Title("procedures_icd", "8872", "Diagnostic ultrasound of heart"),
                     Title("procedures_icd", "3615", "Single internal mammary-coronary artery bypass"),
                     Title("procedures_icd", "387", "Interruption of the vena cava")])
    for phrase, code in [("severe protein calorie malnutrition", "261"), ("adrenal insufficiency", "25541"),
                         ("ischemic hepatitis", "570"), ("light chain amyloidosis", "27739"),
                         ("transthoracic echocardiogram", "8872"), ("LIMA-LAD", "3615"),
                         ("inferior vena cava filter", "387")]:
        assert [m.code for m in t.match(phrase)][:1] == [code], phrase


def test_a_synonym_with_function_words_is_found_in_the_normalised_phrase():
    from ehrlib.pipeline.offline.terminology import Terminology, Title

    # "status" and "to" are function words of the normaliser; the variants still rewrite
    t = Terminology([Title("diagnoses_icd", "3453", "Grand mal status"),
                     Title("procedures_icd", "3615", "Single internal mammary-coronary artery bypass"),
                     Title("procedures_icd", "3961", "Extracorporeal circulation auxiliary to open heart surgery"),
                     Title("procedures_icd", "3761", "Implant of pulsation balloon")])
    assert [m.code for m in t.match("Status epilepticus")] == ["3453"]
    assert [m.code for m in t.match("LIMA to LAD")] == ["3615"]
    # a variant left with one word ("on pump") is not looked for as that word
    assert [m.code for m in t.match("intra-aortic balloon pump")] == ["3761"]


def test_clinician_shorthand_of_one_liners_and_problem_headings():
    # word-level shorthand inside a longer name ("fx", "lac", "R", "CM") and shorthand names
    t = Terminology([Title("diagnoses_icd", "80507", "Closed fracture of seventh cervical vertebra"),
                     Title("diagnoses_icd", "80506", "Closed fracture of sixth cervical vertebra"),
                     Title("diagnoses_icd", "86504", "Injury to spleen without mention of open wound into cavity, "
                                                    "massive parenchymal disruption"),
                     Title("diagnoses_icd", "5845", "Acute kidney failure with lesion of tubular necrosis"),
                     Title("diagnoses_icd", "4254", "Other primary cardiomyopathies"),
                     Title("diagnoses_icd", "I255", "Ischemic cardiomyopathy"),
                     Title("diagnoses_icd", "4263", "Other left bundle branch block"),
                     Title("diagnoses_icd", "2851", "Acute posthemorrhagic anemia"),
                     Title("procedures_icd", "4573", "Open and other right hemicolectomy"),
                     Title("procedures_icd", "4575", "Open and other left hemicolectomy"),
                     Title("procedures_icd", "5419", "Other laparotomy"),
                     Title("procedures_icd", "7935", "Open reduction of fracture with internal fixation, femur"),
                     Title("procedures_icd", "9910", "Injection or infusion of thrombolytic agent"),
                     Title("procedures_icd", "5491", "Percutaneous abdominal drainage")])
    for phrase, code in [("C7 fx", "80507"), ("c6 fracture", "80506"), ("splenic lac", "86504"),
                         ("ATN", "5845"), ("ischemic CM", "I255"), ("new LBBB", "4263"),
                         ("blood loss anemia", "2851"), ("R hemicolectomy", "4573"), ("lt hemicolectomy", "4575"),
                         ("ex-lap x2", "5419"), ("L femur ORIF", "7935"), ("tPA", "9910"),
                         ("IR drain", "5491")]:
        assert [m.code for m in t.match(phrase)][:1] == [code], phrase
    # an ordinal is no other vertebra's
    assert "80506" not in [m.code for m in t.match("C7 fracture", threshold=80.0, limit=5)]


def test_a_qualifier_is_covered_only_as_written():
    # "placement" is a qualifier: no spelling variant of "replacement" names that title
    t = Terminology([Title("procedures_icd", "3193", "Replacement of laryngeal or tracheal stent"),
                     Title("procedures_icd", "3990", "Insertion of non-drug-eluting peripheral vessel stent(s)")])
    assert [m.code for m in t.match("stent placement")] != ["3193"]
    assert [m.code for m in t.match("tracheal stent replacement")][:1] == ["3193"]


@pytest.mark.parametrize("phrase, code", [
    # ICD-10-PCS codes a catheterization of the heart as a measurement of the heart's pressures
    ("Cardiac catheterization", "4A023N7"),
    ("s/p right heart cath", "4A023N6"),
    # ICD-9-CM codes a bronchoalveolar lavage with the bronchoscopic biopsy
    ("Bronchoscopy with mini-BAL", "3324"),
    # a lung cancer by its histology's abbreviation, in either version's title
    ("NSCLC", "C3490"),
])
def test_clinical_names_meet_both_icd_versions_wording(phrase, code):
    titles = [Title("procedures_icd", "4A023N7", "Measurement of Cardiac Sampling and Pressure, Left Heart, "
                                                 "Percutaneous Approach"),
              Title("procedures_icd", "4A023N6", "Measurement of Cardiac Sampling and Pressure, Right Heart, "
                                                 "Percutaneous Approach"),
              Title("procedures_icd", "3324", "Closed [endoscopic] biopsy of bronchus"),
              Title("diagnoses_icd", "C3490", "Malignant neoplasm of unspecified part of unspecified bronchus or "
                                              "lung")]
    assert [m.code for m in Terminology(titles).match(phrase, limit=1)] == [code]


def test_index_names_and_code_status_reach_their_icd_titles():
    # ICD index entries: the clinical name of a code whose title uses other words
    t = Terminology([Title("diagnoses_icd", "2753", "Disorders of phosphorus metabolism"),
                     Title("diagnoses_icd", "2752", "Disorders of magnesium metabolism"),
                     Title("diagnoses_icd", "R066", "Hiccough"),
                     Title("diagnoses_icd", "6930", "Dermatitis due to drugs and medicines taken internally"),
                     Title("diagnoses_icd", "04186", "Helicobacter pylori [H. pylori]"),
                     Title("diagnoses_icd", "60886", "Edema of male genital organs"),
                     Title("diagnoses_icd", "V4986", "Do not resuscitate status"),
                     Title("diagnoses_icd", "Z515", "Encounter for palliative care"),
                     Title("diagnoses_icd", "5990", "Urinary tract infection, site not specified"),
                     Title("diagnoses_icd", "G40909", "Epilepsy, unspecified, not intractable, without status "
                                                     "epilepticus"),
                     Title("procedures_icd", "3E1K78Z", "Irrigation of Genitourinary Tract using Irrigating "
                                                       "Substance, Via Natural or Artificial Opening")])
    for phrase, code in [("hypophosphatemia", "2753"), ("Hypomagnesemia", "2752"), ("hiccups", "R066"),
                         ("drug eruption", "6930"), ("H. pylori", "04186"), ("scrotal edema", "60886"),
                         ("DNR/DNI", "V4986"), ("DNR", "V4986"), ("made CMO", "Z515"),
                         ("comfort measures only", "Z515"), ("seizure disorder", "G40909"),
                         ("continuous bladder irrigation", "3E1K78Z")]:
        assert [m.code for m in t.match(phrase)][:1] == [code], phrase
    # "full code" is no status any title names
    assert [m.code for m in t.match("full code", threshold=80.0)] == []


def test_bedside_procedures_reach_their_icd10_pcs_titles():
    t = Terminology([Title("procedures_icd", "0BH17EZ", "Insertion of Endotracheal Airway into Trachea, Via Natural "
                                                       "or Artificial Opening"),
                     Title("procedures_icd", "0W9D30Z", "Drainage of Pericardial Cavity with Drainage Device, "
                                                       "Percutaneous Approach"),
                     Title("procedures_icd", "3E0G76Z", "Introduction of Nutritional Substance into Upper GI, Via "
                                                       "Natural or Artificial Opening"),
                     Title("procedures_icd", "3E0436Z", "Introduction of Nutritional Substance into Central Vein, "
                                                       "Percutaneous Approach"),
                     Title("procedures_icd", "9229", "Other radiotherapeutic procedure")])
    for phrase, code in [("Intubation", "0BH17EZ"), ("pericardiocentesis", "0W9D30Z"),
                         ("pericardial drain placement", "0W9D30Z"), ("tube feeds", "3E0G76Z"),
                         ("radiation therapy", "9229")]:
        assert [m.code for m in t.match(phrase)][:1] == [code], phrase
    # tube feeds are no nutrition into a vein (that is TPN)
    assert "3E0436Z" not in [m.code for m in t.match("tube feeds", limit=5)]
